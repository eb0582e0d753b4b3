/** For the `default` of a switch over a union: the compiler checks every member is handled. */
export const assertNever = (value: never): never => {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
};
