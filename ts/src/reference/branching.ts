/**
 * The event ids a forked thread shares with its parent (the TypeScript twin of the Python
 * `IdIndex` in threads_cases/reference/branching.py).
 *
 * A fork used to copy every id of its parent; an {@link IdIndex} instead keeps a reference to
 * the parent's ids with the cut-off positions that say which of them the fork sees. It relies
 * on the parent's log being append-only. Chains of forks of forks are flattened once they are
 * {@link MAX_DEPTH} links deep, so a lookup costs at most that many steps.
 */

/** The longest chain of id indexes before it is flattened. */
export const MAX_DEPTH = 8;

/**
 * The event ids a thread must not reuse, each with its position in the log. A fork sees its
 * parent's ids recorded before the fork (`clash` cut-off: the parent's length then) and can find
 * by id the events of the shared prefix (`found` cut-off: the prefix length).
 */
export class IdIndex {
  private own: Map<string, number>;
  private parent: IdIndex | null = null;
  private cutClash = 0;
  private cutFound = 0;
  /** How many links lead to the root index. */
  depth = 0;

  constructor(positions?: Map<string, number>) {
    this.own = positions ?? new Map();
  }

  /** A child index: the ids here at positions below `clash` are taken, those below `found` are in the child's log. */
  branch(clash: number, found: number): IdIndex {
    const child = new IdIndex();
    if (this.depth + 1 > MAX_DEPTH) {
      // flattened: the parent's ids past `found` stay (taken); the caller checks that the log
      // holds an id at the position this index gives
      child.own = new Map(this.entries(clash));
      return child;
    }
    child.parent = this;
    child.cutClash = clash;
    child.cutFound = found;
    child.depth = this.depth + 1;
    return child;
  }

  private *entries(cut: number): Generator<[string, number]> {
    if (this.parent !== null) yield* this.parent.entries(Math.min(cut, this.cutClash));
    for (const [id, p] of this.own) if (p < cut) yield [id, p];
  }

  add(id: string, position: number): void {
    this.own.set(id, position);
  }

  /** Whether `id` is taken. */
  has(id: string): boolean {
    return this.lookup(id, (index) => index.cutClash) !== undefined;
  }

  /** The position of `id` in this thread's log, if any (the caller checks the log holds it there). */
  position(id: string): number | undefined {
    return this.lookup(id, (index) => index.cutFound);
  }

  private lookup(id: string, cutOf: (index: IdIndex) => number): number | undefined {
    let index: IdIndex | null = this;
    let cut = Infinity;
    while (index !== null) {
      const p = index.own.get(id);
      if (p !== undefined && p < cut) return p;
      cut = Math.min(cut, cutOf(index));
      index = index.parent;
    }
    return undefined;
  }
}
