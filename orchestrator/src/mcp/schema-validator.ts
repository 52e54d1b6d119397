import vm from 'node:vm';
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js';
import { loadValidatorSync } from './sdk';

/**
 * How long one validation of a call's input may take. The schema is the server's: a `pattern` such
 * as `^(a+)+$` backtracks for hours on 40 characters, and validation runs in the orchestrator, on
 * the run's event loop (the timers, the sandbox's heartbeats, every other call).
 */
const VALIDATION_BUDGET_MS = 1000;

const context = vm.createContext(Object.create(null) as object);
const runCheck = new vm.Script('check()');

/**
 * The validator of one server's tool input schemas (docs/mcp.md): the SDK's (Ajv), each validation
 * run under a vm timeout so V8 interrupts one that runs past VALIDATION_BUDGET_MS (the call then
 * fails validation and is not sent), and one per server, so one server's `$id` cannot stand for
 * another's schema (the SDK's Ajv reuses a compiled schema by its `$id`). A schema that does not
 * compile (a remote `$ref`: nothing is fetched) throws at getValidator.
 */
export function mcpSchemaValidator(): jsonSchemaValidator {
  const ajv = new (loadValidatorSync())();
  return {
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      const validate = ajv.getValidator<T>(schema);
      return (input: unknown) => {
        const scope = context as { check?: () => ReturnType<JsonSchemaValidator<T>> };
        scope.check = () => validate(input);
        try {
          return runCheck.runInContext(context, { timeout: VALIDATION_BUDGET_MS }) as ReturnType<
            JsonSchemaValidator<T>
          >;
        } catch (e) {
          const why =
            (e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT'
              ? `it took over ${VALIDATION_BUDGET_MS} ms to check (a pattern of the schema backtracks on it)`
              : `it could not be checked: ${(e as Error).message}`;
          return { valid: false, data: undefined, errorMessage: why };
        } finally {
          delete scope.check;
        }
      };
    },
  };
}
