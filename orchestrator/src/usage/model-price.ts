/**
 * What one model costs, in US dollars per million tokens. `cachedInput` is the price of input
 * tokens served from the provider's prompt cache, `cacheWrite` of input tokens written to it
 * (Anthropic bills those above the base price); each is the base input price when absent.
 */
export interface ModelPrice {
  input: number;
  output: number;
  cachedInput?: number;
  cacheWrite?: number;
}

/** A price and where it came from (`built-in table (DATE)` or the config file that set it): run.started's `price`. */
export interface PriceInForce extends ModelPrice {
  source: string;
}
