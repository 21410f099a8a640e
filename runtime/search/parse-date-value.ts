/**
 * Date parsing for date search values: the instant range a partial date or dateTime covers.
 *
 * @see http://hl7.org/fhir/R4/search.html#date
 */
export type Precision = 'year' | 'month' | 'day' | 'minute' | 'second' | 'millisecond';

/** start inclusive, end exclusive, both full ISO instants in UTC; the range implied by the precision given. */
export interface DateRange {
  start: string;
  end: string;
  precision: Precision;
}

/**
 * YYYY, YYYY-MM, YYYY-MM-DD, or a time of hh:mm, hh:mm:ss or hh:mm:ss.fff with an optional zone.
 * Hour-only times are not FHIR syntax; zones apply only with a time, as in FHIR's date type.
 * @see http://hl7.org/fhir/R4/datatypes.html#dateTime
 */
const DATE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;

/** What an unencoded `+` in a query string turns into: the zone arrives as ` 02:00`. */
const ZONE_WITH_SPACE = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)? \d{2}:\d{2}$/;

const MONTH_NAMES = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');

/**
 * Parses `text` (no prefix) into [start, end) in UTC; returns why it is not a date otherwise.
 * A value without a zone is taken as UTC. Fractions of a second beyond milliseconds are cut off:
 * JavaScript dates cannot hold them, and the millisecond they fall in still contains them.
 */
export function parseDateRange(text: string): DateRange | string {
  const match = DATE.exec(text);
  if (!match) {
    return ZONE_WITH_SPACE.test(text)
      ? 'the timezone has a space where "+" was meant (encode "+" as %2B in a URL)'
      : 'not in a supported date format';
  }
  const [, year, month = '01', day = '01', hour = '00', minute = '00', second = '00'] = match;
  const [fraction, zone] = [match[7], match[8]];
  const fields = [year, month, day, hour, minute, second].map(Number);
  const problem = calendarProblem(fields) ?? (zone ? zoneProblem(zone) : undefined);
  if (problem) return problem;
  const millis = Number((fraction ?? '').slice(0, 3).padEnd(3, '0'));
  const start = utc(fields, millis) - zoneOffsetMinutes(zone) * 60_000;
  const precision = precisionOf(match);
  return { start: iso(start), end: iso(endOf(start, precision)), precision };
}

/** Real calendar values only: no month 13, no 30 February, no hour 24, no leap second. */
function calendarProblem([year, month, day, hour, minute, second]: number[]): string | undefined {
  if (year === 0) return 'year 0000 does not exist (years run from 0001)';
  if (month < 1 || month > 12) return `month ${month} does not exist`;
  if (day < 1 || day > daysInMonth(year, month)) {
    return `day ${day} does not exist in ${MONTH_NAMES[month - 1]} ${year}`;
  }
  if (hour > 23) return `hour ${hour} does not exist (hours run from 00 to 23)`;
  if (minute > 59) return `minute ${minute} does not exist (minutes run from 00 to 59)`;
  if (second > 59) return `second ${second} does not exist (seconds run from 00 to 59)`;
  return undefined;
}

/** FHIR allows offsets from -14:00 to +14:00 (datatypes.html#dateTime). */
function zoneProblem(zone: string): string | undefined {
  const minutes = Math.abs(zoneOffsetMinutes(zone));
  const valid = minutes <= 14 * 60 && Number(zone.slice(4)) < 60;
  return valid ? undefined : `timezone ${zone} does not exist (offsets run from -14:00 to +14:00)`;
}

function zoneOffsetMinutes(zone: string | undefined): number {
  if (zone === undefined || zone === 'Z') return 0;
  const minutes = Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4));
  return zone.startsWith('-') ? -minutes : minutes;
}

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
}

/** setUTCFullYear rather than Date.UTC, which maps years 0-99 to 1900-1999. */
function utc([year, month, day, hour, minute, second]: number[], millis: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return date.getTime();
}

/** The finest component present in the regex match decides the precision. */
function precisionOf(match: RegExpExecArray): Precision {
  if (match[7] !== undefined) return 'millisecond';
  if (match[6] !== undefined) return 'second';
  if (match[4] !== undefined) return 'minute';
  if (match[3] !== undefined) return 'day';
  return match[2] !== undefined ? 'month' : 'year';
}

/** Years and months vary in length, so step them on the calendar; the rest are fixed spans. */
function endOf(start: number, precision: Precision): number {
  const date = new Date(start);
  if (precision === 'year') date.setUTCFullYear(date.getUTCFullYear() + 1);
  else if (precision === 'month') date.setUTCMonth(date.getUTCMonth() + 1);
  else return start + { day: 86_400_000, minute: 60_000, second: 1_000, millisecond: 1 }[precision];
  return date.getTime();
}

function iso(millis: number): string {
  return new Date(millis).toISOString();
}
