// A map kept to a size: what compiled statements, prepared statements, generated functions and
// patterns are kept in, each made once per key and dropped oldest first when the map is full.

/**
 * The value kept under `key`, else the one `make` makes, kept: when `max` are kept already, the
 * oldest entry goes first. `make` must not answer undefined.
 */
export function keptOrMade<K, V>(map: Map<K, V>, key: K, max: number, make: () => V): V {
  const known = map.get(key)
  if (known !== undefined) return known
  const made = make()
  if (map.size >= max) map.delete(map.keys().next().value!)
  map.set(key, made)
  return made
}
