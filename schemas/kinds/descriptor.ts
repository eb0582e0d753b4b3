/**
 * What logplane knows about a kind, in one place (DESIGN: kinds, one registry). A descriptor
 * is generated from the vendored Kubernetes API document (group, version, kind, plural,
 * scope, subresources, verbs) and completed from kube-apiserver's own registry code where
 * the document is silent (short names, categories, name format, selectable fields, printer
 * columns); every layer reads it instead of keeping its own list of kinds.
 */

/** Whether objects of a kind live in a namespace. */
export type Scope = 'Namespaced' | 'Cluster';

/**
 * How kube-apiserver validates the names of a kind: a DNS-1123 label (Namespace), a
 * DNS-1035 label, which starts with a letter (Service), a DNS-1123 subdomain (most kinds),
 * or any path segment (RBAC roles and bindings, …).
 */
export type NameFormat = 'label' | 'dns1035Label' | 'subdomain' | 'pathSegment';

/** A subresource a kind serves, e.g. `status` or `scale` (whose kind is autoscaling/v1 Scale). */
export interface SubresourceDescriptor {
  readonly name: string;
  /** The kind the subresource reads and writes; `''` when it is the kind itself (status). */
  readonly kind: string;
  readonly group?: string;
  readonly version?: string;
  readonly verbs: readonly string[];
}

/** One column of a kind's Table (kube's printer columns, `kubectl get`). */
export interface PrinterColumn {
  readonly name: string;
  /** integer, number, string, boolean, date (OpenAPI types, as in a Table's columnDefinitions). */
  readonly type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  readonly format?: string;
  readonly description: string;
  /** 0 for `kubectl get`, 1 and more only with `-o wide`. */
  readonly priority: number;
}

/**
 * The partition domain of a kind: which partition key its events carry. Every event that a
 * precondition judged by the fold depends on must lie in one partition (DESIGN invariant
 * 2), so kinds whose objects are judged together share a domain; the rest spread by their
 * own object key.
 */
export type PartitionDomain =
  /** Each object is its own partition key (its object key). */
  | { readonly type: 'object' }
  /** Every object of the kind shares the partition key `key` with the other kinds of that domain. */
  | { readonly type: 'shared'; readonly key: string }
  /**
   * Custom resources: the CustomResourceDefinitions of one API group, the schemas they
   * register and every object of their kinds share the partition key of that group.
   */
  | { readonly type: 'customResourceGroup' };

/** Everything logplane knows about one kind. */
export interface KindDescriptor {
  /** The API group; `''` is the core group. */
  readonly group: string;
  /** The kind's name in its group, as in `kind:` of a manifest. */
  readonly kind: string;
  /** The versions served, the storage version first. */
  readonly versions: readonly string[];
  /** The plural resource name used in URLs: `pods`. */
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly scope: Scope;
  readonly nameFormat: NameFormat;
  /** The verbs of the main resource. */
  readonly verbs: readonly string[];
  readonly subresources: readonly SubresourceDescriptor[];
  /** Fields a fieldSelector may name, besides metadata.name and metadata.namespace. */
  readonly selectableFields: readonly string[];
  readonly printerColumns: readonly PrinterColumn[];
  /** The OpenAPI definition name of the kind in the vendored API document. */
  readonly definition: string;
}
