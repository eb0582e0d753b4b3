/**
 * Name and label syntax checks of `k8s.io/apimachinery/pkg/util/validation`, returning
 * kube's messages (undefined when the value is fine).
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const IANA_SVC_NAME = /^[-a-z0-9]+$/;

/** Why `value` is not a DNS-1123 label (≤ 63 chars, `[a-z0-9]([-a-z0-9]*[a-z0-9])?`). */
export const dns1123LabelProblem = (value: string): string | undefined => {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!DNS1123_LABEL.test(value)) {
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  }
  return undefined;
};

/** Why `value` is not a DNS-1123 subdomain (≤ 253 chars, dot-separated labels). */
export const dns1123SubdomainProblem = (value: string): string | undefined => {
  if (value.length > 253) return 'must be no more than 253 characters';
  if (!DNS1123_SUBDOMAIN.test(value)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  }
  return undefined;
};

/** Why `value` is not a DNS-1035 label (a DNS-1123 label starting with a letter): Service names. */
export const dns1035LabelProblem = (value: string): string | undefined => {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!DNS1035_LABEL.test(value)) {
    return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
  }
  return undefined;
};

/** Why `key` is not a qualified name (`[prefix/]name`): label and annotation keys, finalizers. */
export const qualifiedNameProblem = (key: string): string | undefined => {
  const parts = key.split('/');
  if (parts.length > 2) {
    return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
  }
  const name = parts.length === 2 ? parts[1]! : key;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) return 'prefix part must be non-empty';
    const prefixProblem = dns1123SubdomainProblem(prefix);
    if (prefixProblem) return `prefix part ${prefixProblem}`;
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!QUALIFIED_NAME.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  }
  return undefined;
};

/** Why `value` is not a label value (≤ 63 chars, may be empty). */
export const labelValueProblem = (value: string): string | undefined => {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!LABEL_VALUE.test(value)) {
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  }
  return undefined;
};

/** Why `name` is not a valid environment variable name. */
export const envVarNameProblem = (name: string): string | undefined =>
  ENV_VAR_NAME.test(name)
    ? undefined
    : "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";

/** Why `name` is not an IANA service name (named ports: ≤ 15 chars, a letter, no `--`). */
export const portNameProblem = (name: string): string | undefined => {
  if (name.length > 15) return 'must be no more than 15 characters';
  if (!IANA_SVC_NAME.test(name)) return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)";
  if (name.includes('--')) return 'must not contain consecutive hyphens';
  if (!/[a-z]/.test(name)) return 'must contain at least one letter (a-z)';
  if (name.startsWith('-') || name.endsWith('-')) return 'must not begin or end with a hyphen';
  return undefined;
};

/** Why `ip` is not an IPv4 or IPv6 address. */
export const ipProblem = (ip: string): string | undefined => {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4) return v4.slice(1).every((octet) => Number(octet) <= 255 && !/^0\d/.test(octet)) ? undefined : 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
  if (ip.includes(':') && /^[0-9a-fA-F:.]+$/.test(ip)) return undefined;
  return 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
};

/**
 * kube's ValidatePathSegmentName (RBAC roles and bindings, …): any name that can be one
 * segment of a URL path.
 */
export const pathSegmentProblem = (value: string): string | undefined => {
  if (value === '.' || value === '..') return `may not be '${value}'`;
  if (value.includes('/')) return "may not contain '/'";
  if (value.includes('%')) return "may not contain '%'";
  return undefined;
};
