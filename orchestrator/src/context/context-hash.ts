import { canonicalJson, sha256Hex } from '@gatehouse/shared';
import type { CompiledContext } from './compile';

/**
 * The hash a `model.request` records of the context it sent: canonical JSON (sorted keys), because
 * the log stores event data canonically: a model's `{"path", "oldText", "newText"}` is read back as
 * `{"newText", "oldText", "path"}`, so a hash of the live key order could never be rebuilt from the
 * log (`gatehouse replay --mode trace` rebuilds it). The JSON round trip first drops what JSON drops
 * (undefined fields), as writing the log did.
 */
export function contextSha256(request: CompiledContext['request']): string {
  return sha256Hex(canonicalJson(JSON.parse(JSON.stringify(request))));
}
