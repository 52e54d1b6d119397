import type { ErrorCode, ResultStatus } from '@gatehouse/shared';

/**
 * A refusal or failure a primitive reports. `rejected` means nothing was changed (the request was
 * refused before acting); `failed` means the primitive acted and the action failed.
 */
export class PrimitiveError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly status: Extract<ResultStatus, 'rejected' | 'failed'> = 'rejected',
    readonly path?: string,
  ) {
    super(message);
  }
}

export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : undefined;
}
