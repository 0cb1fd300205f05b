/** A value a request sent, as an error message quotes it: whole up to 64 characters, else its start and `…`. */
export const shownValue = (value: string): string => (value.length <= 64 ? value : `${value.slice(0, 64)}…`)
