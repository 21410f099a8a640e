/**
 * Date's and Number's toLocale…String as in Node, through the global Intl (isolate/web-intl.ts),
 * read only when called: QuickJS's own ignore the locales and options (zero-padded US dates,
 * no grouping). A small script in every isolate: the methods are on prototypes, which a lazy
 * global cannot reach.
 */
type Options = Record<string, unknown> | undefined;

interface Formatter {
  format(value: unknown): string;
}
interface IntlLike {
  DateTimeFormat: new (locales?: unknown, options?: Options) => Formatter;
  NumberFormat: new (locales?: unknown, options?: Options) => Formatter;
}
const intl = () => (globalThis as unknown as { Intl: IntlLike }).Intl;

/** The defaults each method adds when no date or time component is asked for. */
function dateMethod(defaults: Options, keys: string[]) {
  return function (this: Date, locales?: unknown, options?: Options): string {
    if (!(this instanceof Date)) throw new TypeError('this is not a Date object.');
    if (Number.isNaN(this.getTime())) return 'Invalid Date';
    const given = options ?? {};
    const asked = keys.some((key) => given[key] !== undefined);
    return new (intl().DateTimeFormat)(locales, asked ? given : { ...defaults, ...given }).format(
      this,
    );
  };
}

const DATE = { year: 'numeric', month: 'numeric', day: 'numeric' };
const TIME = { hour: 'numeric', minute: 'numeric', second: 'numeric' };
const DATE_KEYS = ['weekday', 'year', 'month', 'day', 'dateStyle'];
const TIME_KEYS = ['dayPeriod', 'hour', 'minute', 'second', 'fractionalSecondDigits', 'timeStyle'];

const methods: [object, string, unknown][] = [
  [
    Date.prototype,
    'toLocaleString',
    dateMethod({ ...DATE, ...TIME }, [...DATE_KEYS, ...TIME_KEYS]),
  ],
  [Date.prototype, 'toLocaleDateString', dateMethod(DATE, DATE_KEYS)],
  [Date.prototype, 'toLocaleTimeString', dateMethod(TIME, TIME_KEYS)],
  [
    Number.prototype,
    'toLocaleString',
    function (this: number, locales?: unknown, options?: Options): string {
      return new (intl().NumberFormat)(locales, options).format(Number(this));
    },
  ],
];
for (const [prototype, name, value] of methods) {
  Object.defineProperty(prototype, name, { value, writable: true, configurable: true });
}
