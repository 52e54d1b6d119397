import { GatehouseError } from '../errors';
import type { Budgets } from '../run/budgets';
import type { PriceInForce } from './model-price';
import { priceKey } from './price-for';

/** A cost budget was asked for a model without a price: nothing runs. */
export class NoPriceError extends GatehouseError {
  readonly kind = 'usage';
}

/**
 * A cost budget needs a price: without one every turn would cost "unknown" and the budget would
 * never stop the run. Refused before anything starts, saying how to give the model a price.
 */
export function requirePrice(model: string, budgets: Budgets, price: PriceInForce | undefined): void {
  if (budgets.maxCostUsd === undefined || price) return;
  const key = priceKey(model) ?? model;
  const provider = key.includes(':') ? key.slice(0, key.indexOf(':')) : 'provider';
  throw new NoPriceError(
    `--max-cost (or budgets.maxCostUsd) needs the price of ${key}, and gatehouse has none. Give it one in ` +
      `the config you pass with --config FILE: "prices": {"${key}": {"input": 2.0, "cachedInput": 0.5, ` +
      `"output": 8.0}} (US dollars per million tokens; "${provider}:*" prices every ${provider} model), or ` +
      'drop the cost budget. A repository\'s own config cannot set prices (docs/config.md, "prices").',
  );
}
