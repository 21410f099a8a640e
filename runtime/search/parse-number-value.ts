/**
 * Decimal parsing for number and quantity search values, with the implicit range that the
 * significant figures of the written value imply.
 *
 * @see http://hl7.org/fhir/R4/search.html#number
 */

/** A decimal and the range [low, high) its precision covers. */
export interface DecimalRange {
  value: number;
  low: number;
  high: number;
}

/**
 * FHIR's decimal syntax (http://hl7.org/fhir/R4/datatypes.html#decimal), relaxed to allow leading
 * zeros: they change neither the value nor its precision. No leading `+`: in a query string an
 * unencoded `+` means a space, so accepting it would only hide client bugs.
 */
const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Parses `text` as a decimal; returns why it is not one otherwise.
 *
 * The range is half a unit of the last significant digit either side, so `100` covers
 * [99.5, 100.5) and `100.00` covers [99.995, 100.005). In exponent form the mantissa's digits
 * are the significant ones, so `1e2` (one significant figure) covers [50, 150).
 *
 * @see http://hl7.org/fhir/R4/search.html#number ("the implicit precision of the number")
 */
export function parseDecimal(text: string): DecimalRange | string {
  const match = DECIMAL.exec(text);
  if (!match) return 'not a decimal number';
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const value = Number(text);
  // value = digits × 10^scale, where digits are exactly the figures the client wrote.
  const digits = BigInt(sign + whole + fraction);
  const scale = Number(exponent) - fraction.length;
  // Work in decimal strings so the bounds are the doubles nearest the exact decimal bounds
  // (100.00 - 0.005 in floating point would give 99.99499999999999).
  const low = Number(`${digits * 10n - 5n}e${scale - 1}`);
  const high = Number(`${digits * 10n + 5n}e${scale - 1}`);
  // Overflow gives infinities and underflow an empty range; neither can be searched on.
  if (![value, low, high].every(Number.isFinite) || !(low < high)) {
    return 'too large or too small to represent';
  }
  return { value, low, high };
}
