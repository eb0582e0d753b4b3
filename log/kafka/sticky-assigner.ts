/**
 * A sticky partition assigner for kafkajs consumer groups. kafkajs ships only RoundRobin,
 * which deals partitions by sorted member id, so a newcomer can take a partition from a
 * member that keeps running: a needless handover of the keys a reconciler acts on. Here
 * every member announces what it owns (in the JoinGroup metadata's `userData`), and the
 * leader keeps each partition with its owner as far as balance allows, moving only the
 * surplus to members under their share.
 */
import { AssignerProtocol, type Assigner, type GroupMemberAssignment, type PartitionAssigner } from 'kafkajs';

/** Physical topic → partitions. */
export type TopicPartitions = Readonly<Record<string, readonly number[]>>;

/** One group member as the leader sees it. */
export interface StickyMember {
  readonly memberId: string;
  /** Topics this member subscribed to; it only gets partitions of these. */
  readonly topics: readonly string[];
  /** What the member owned before this rebalance (its own claim). */
  readonly owned: TopicPartitions;
}

const byNumber = (a: number, b: number) => a - b;
const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Assigns every partition of `partitions` to exactly one subscribed member. Per topic each
 * member gets ⌊n/m⌋ or ⌈n/m⌉ partitions; members keep what they owned within that share
 * (conflicting claims go to the lowest member id); the rest go to the least-loaded members
 * (fewest in this topic, then fewest overall, then lowest id). Deterministic.
 */
export const stickyAssign = (partitions: TopicPartitions, members: readonly StickyMember[]): Record<string, Record<string, number[]>> => {
  const sortedMembers = [...members].sort((a, b) => byString(a.memberId, b.memberId));
  const result: Record<string, Record<string, number[]>> = Object.fromEntries(sortedMembers.map((m) => [m.memberId, {}]));
  const total = new Map<string, number>(sortedMembers.map((m) => [m.memberId, 0]));

  for (const topic of Object.keys(partitions).sort(byString)) {
    const eligible = sortedMembers.filter((member) => member.topics.includes(topic));
    if (eligible.length === 0) continue;
    const all = [...partitions[topic]!].sort(byNumber);
    const base = Math.floor(all.length / eligible.length);
    let extra = all.length % eligible.length;
    const claimed = new Set<number>();
    const mine = new Map<string, number[]>(eligible.map((m) => [m.memberId, []]));

    for (const member of eligible) {
      const keep = [...new Set(member.owned[topic] ?? [])].filter((p) => all.includes(p) && !claimed.has(p)).sort(byNumber);
      let allowed = Math.min(keep.length, base);
      if (keep.length > base && extra > 0) {
        allowed += 1;
        extra -= 1;
      }
      for (const p of keep.slice(0, allowed)) {
        claimed.add(p);
        mine.get(member.memberId)!.push(p);
      }
    }

    for (const p of all.filter((partition) => !claimed.has(partition))) {
      let candidates = eligible.filter((m) => mine.get(m.memberId)!.length < base);
      const usesExtra = candidates.length === 0;
      if (usesExtra) candidates = eligible.filter((m) => mine.get(m.memberId)!.length === base);
      const chosen = candidates.reduce((best, m) => {
        const load = mine.get(m.memberId)!.length - mine.get(best.memberId)!.length;
        if (load !== 0) return load < 0 ? m : best;
        const overall = total.get(m.memberId)! - total.get(best.memberId)!;
        return overall < 0 ? m : best;
      });
      if (usesExtra) extra -= 1;
      mine.get(chosen.memberId)!.push(p);
    }

    for (const [memberId, owned] of mine) {
      if (owned.length === 0) continue;
      result[memberId]![topic] = owned.sort(byNumber);
      total.set(memberId, total.get(memberId)! + owned.length);
    }
  }
  return result;
};

const NAME = 'LogplaneStickyAssigner';
const VERSION = 0;

const decodeOwned = (userData: Buffer | undefined): TopicPartitions => {
  if (!userData || userData.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(userData.toString('utf8'));
    if (!parsed || typeof parsed !== 'object') return {};
    return Object.fromEntries(
      Object.entries(parsed as Record<string, unknown>).filter(
        (entry): entry is [string, number[]] => Array.isArray(entry[1]) && entry[1].every(Number.isInteger),
      ),
    );
  } catch {
    return {};
  }
};

/**
 * The kafkajs `PartitionAssigner` for one member: `owned()` is what this member holds now
 * (sent to the leader with every join); the leader runs `stickyAssign`.
 */
export const stickyPartitionAssigner =
  (owned: () => TopicPartitions): PartitionAssigner =>
  ({ cluster }) => {
    const assigner: Assigner = {
      name: NAME,
      version: VERSION,
      assign: async ({ members, topics }): Promise<GroupMemberAssignment[]> => {
        const decoded = members.map(({ memberId, memberMetadata }): StickyMember => {
          const metadata = AssignerProtocol.MemberMetadata.decode(memberMetadata);
          return { memberId, topics: metadata?.topics ?? topics, owned: decodeOwned(metadata?.userData) };
        });
        // Members may subscribe to topics the leader does not; make sure their metadata is loaded.
        const union = [...new Set([...topics, ...decoded.flatMap((member) => member.topics)])];
        if (union.some((topic) => cluster.findTopicPartitionMetadata(topic).length === 0)) {
          await cluster.addMultipleTargetTopics(union);
        }
        const partitions = Object.fromEntries(
          union.map((topic) => [topic, cluster.findTopicPartitionMetadata(topic).map((m) => m.partitionId)]),
        );
        const assignment = stickyAssign(partitions, decoded);
        return decoded.map(({ memberId }) => ({
          memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({
            version: VERSION,
            assignment: assignment[memberId] ?? {},
            userData: Buffer.alloc(0),
          }),
        }));
      },
      protocol: ({ topics }) => ({
        name: NAME,
        metadata: AssignerProtocol.MemberMetadata.encode({
          version: VERSION,
          topics,
          userData: Buffer.from(JSON.stringify(owned())),
        }),
      }),
    };
    return assigner;
  };
