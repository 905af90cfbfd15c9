/**
 * Input a caller got wrong (a malformed date, a value out of range), as opposed to a RangeError
 * the runtime throws on its own (a string too long to build): only this one is the caller's to fix.
 */
export class InvalidInputError extends RangeError {}
