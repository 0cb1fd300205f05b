/** Deepest JSON nesting (arrays and objects) a request body may have; checked on the raw text before parsing. */
export const MAX_JSON_DEPTH = 32

/**
 * True when the JSON text nests arrays/objects deeper than `max` (strings are skipped, escapes honoured). Parsing
 * deep input is fine; what is made of it afterwards (schema errors, messages that print the value) recurses and can
 * exhaust the stack.
 */
export const jsonTooDeep = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

/** `application/json`, optionally with `charset=utf-8`; nothing else (no forms, no multipart, no `text/plain`). */
export const isJsonContentType = (value: string | undefined): boolean => {
  if (value === undefined) return false
  const [type, ...params] = value.split(";").map((part) => part.trim().toLowerCase())
  return type === "application/json" && params.every((param) => param === "" || /^charset="?utf-8"?$/.test(param))
}
