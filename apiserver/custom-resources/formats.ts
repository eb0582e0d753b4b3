/**
 * String formats as kube-openapi's `strfmt.Default` registry checks them for custom
 * resources. Only strings are checked, and only for the formats the registry knows; any
 * other format (`int32`, `int64`, `float`, `double`, unknown names) is ignored, as in kube,
 * which does not range-check `int32`/`int64` integers either.
 */

const DATE_TIME_CLOCK = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HOSTNAME = /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const MAC = /^([0-9a-fA-F]{2}([:-]))([0-9a-fA-F]{2}\2){4}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/;
const HEX_COLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_PART = '\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*';
const RGB_COLOR = new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`);
const ISBN10 = /^(?:[0-9]{9}X|[0-9]{10})$/;
const ISBN13 = /^(?:[0-9]{13})$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const CREDIT_CARD = /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const DURATION_PART = /(\d+)\s*([A-Za-zµ]+)/g;
const DURATION_UNITS = [['ns', 'nano'], ['us', 'µs', 'micro'], ['ms', 'milli'], ['s', 'sec'], ['m', 'min'], ['h', 'hr', 'hour'], ['d', 'day'], ['w', 'wk', 'week']];

/** Go's `time.Parse("2006-01-02", s)`: a real calendar date. */
const isDate = (value: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= days;
};

/** strfmt's `IsDateTime`: a date, `t`, and a clock with a zone (case-insensitive). */
const isDateTime = (value: string): boolean => {
  if (value.length < 4) return false;
  const parts = value.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const clock = DATE_TIME_CLOCK.exec(parts[1]!);
  return clock !== null && clock[1]! <= '23' && clock[2]! <= '59' && clock[3]! <= '59';
};

/** strfmt's `ParseDuration`: Go's duration syntax, or `<n> <unit>` groups (`3 days`, `1w`). */
const isDuration = (value: string): boolean => {
  if (GO_DURATION.test(value) || value === '0') return true;
  let ok = false;
  for (const match of value.matchAll(DURATION_PART)) {
    const unit = match[2]!.toLowerCase().trim();
    for (const variants of DURATION_UNITS) {
      const last = variants.length - 1;
      if (variants.some((variant, i) => (i === last && unit.startsWith(variant)) || variant === unit)) ok = true;
    }
  }
  return ok;
};

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

const isIPv6 = (value: string): boolean => {
  if (!/^[0-9a-fA-F:.]+$/.test(value) || !value.includes(':')) return false;
  try {
    return new URL(`http://[${value}]/`).hostname.length > 0;
  } catch {
    return false;
  }
};

/** Go's `net.ParseCIDR`. */
const isCIDR = (value: string): boolean => {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const [ip, bits] = [value.slice(0, slash), value.slice(slash + 1)];
  if (!/^\d{1,3}$/.test(bits)) return false;
  if (IPV4.test(ip)) return Number(bits) <= 32;
  return isIPv6(ip) && Number(bits) <= 128;
};

/** Go's `url.ParseRequestURI`: an absolute URI or an absolute path. */
const isURI = (value: string): boolean => {
  if (value.startsWith('/')) return !/\s/.test(value);
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
};

const isBase64 = (value: string): boolean => BASE64.test(value);

/** The format checks by name; strfmt normalizes names by dropping `-` (`date-time` is `datetime`). */
const FORMATS: ReadonlyMap<string, (value: string) => boolean> = new Map([
  ['bsonobjectid', (v: string) => BSON_OBJECT_ID.test(v)],
  ['uri', isURI],
  ['email', (v: string) => EMAIL.test(v)],
  ['hostname', (v: string) => v.length <= 255 && HOSTNAME.test(v)],
  ['ipv4', (v: string) => IPV4.test(v)],
  ['ipv6', isIPv6],
  ['cidr', isCIDR],
  ['mac', (v: string) => MAC.test(v)],
  ['uuid', (v: string) => UUID.test(v)],
  ['uuid3', (v: string) => UUID3.test(v)],
  ['uuid4', (v: string) => UUID4.test(v)],
  ['uuid5', (v: string) => UUID5.test(v)],
  ['isbn', (v: string) => ISBN10.test(v) || ISBN13.test(v)],
  ['isbn10', (v: string) => ISBN10.test(v)],
  ['isbn13', (v: string) => ISBN13.test(v)],
  ['creditcard', (v: string) => CREDIT_CARD.test(v)],
  ['ssn', (v: string) => SSN.test(v)],
  ['hexcolor', (v: string) => HEX_COLOR.test(v)],
  ['rgbcolor', (v: string) => RGB_COLOR.test(v)],
  ['byte', isBase64],
  ['password', () => true],
  ['date', isDate],
  ['duration', isDuration],
  ['datetime', isDateTime],
]);

/**
 * Whether a string is valid for `format`: undefined when the format is not one kube checks
 * (then anything passes), else true or false.
 */
export const checkFormat = (format: string, value: string): boolean | undefined => {
  const check = FORMATS.get(format.replaceAll('-', '').toLowerCase());
  return check ? check(value) : undefined;
};
