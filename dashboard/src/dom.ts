/** A small element builder: `h('a', { href: '#/pods' }, 'Pods')`. Text is always set as text, never parsed as HTML. */
type Child = Node | string | null | undefined | false;

export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string | boolean | undefined>> = {},
  ...children: (Child | readonly Child[])[]
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
};

/** Replaces the children of `parent`. */
export const replace = (parent: Element, ...children: (Child | readonly Child[])[]): void => {
  parent.replaceChildren(...children.flat().filter((c): c is Node | string => c !== null && c !== undefined && c !== false));
};
