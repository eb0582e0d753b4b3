/**
 * The bearer token of this browser tab: kept in sessionStorage (gone when the tab closes,
 * never shared with other tabs), never put in a URL.
 */
const KEY = 'logplane.token';

/** The token the user logged in with, if any. */
export const readToken = (): string | null => sessionStorage.getItem(KEY);

export const saveToken = (token: string): void => sessionStorage.setItem(KEY, token);

export const clearToken = (): void => sessionStorage.removeItem(KEY);
