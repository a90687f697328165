// The one slug rule of the server, Django's `slugify` (which the reference system uses): the text
// is decomposed (NFKD) and reduced to ASCII, everything but letters, digits, underscores, hyphens
// and spaces is dropped, it is lower-cased, and runs of spaces and hyphens become one hyphen;
// leading and trailing hyphens and underscores go. The result matches `^[-a-zA-Z0-9_]+$` or is
// empty; `fallback` stands in for an empty result, so a slug is never empty.

export const SLUG_PATTERN = '^[-a-zA-Z0-9_]+$'

/** Django's slugify, cut to `maxLength` characters, or `fallback` when nothing is left. */
export function slugify(text: string, fallback: string, maxLength = 50): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[^ -~\s]/g, '')
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .slice(0, maxLength)
    .replace(/^[-_]+|[-_]+$/g, '')
  return slug || fallback
}
