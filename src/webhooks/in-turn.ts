/**
 * Up to `count` of `ids` (in id order), from the first after `after` round to the start: endpoints in
 * turn, when a step's bound leaves some for the next (lanes refilled, endpoints asked whether they want
 * events fanned out).
 */
export function inTurn(ids: readonly number[], after: number, count: number): number[] {
  return [...ids.filter((id) => id > after), ...ids.filter((id) => id <= after)].slice(0, count)
}
