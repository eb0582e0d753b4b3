/**
 * Consumer groups of the embedded log: one process, so no partition splitting. For each
 * topic, the longest-standing member subscribed to it owns every partition; the others
 * stand by with an empty assignment and take over, in join order, when it leaves.
 *
 * Every membership change (join or leave) increments the group's generation; members
 * whose partitions changed (and every newcomer) receive an assignment carrying it, so each
 * member sees strictly increasing generations. Groups live in memory: after a restart
 * everyone joins again.
 */
import { randomUUID } from 'node:crypto';
import { ReplaySubject } from 'rxjs';
import type { Assignment, GroupMembership, Topic } from '../port.ts';
import { TOPICS } from '../port.ts';

interface Member {
  readonly memberId: string;
  readonly topics: readonly Topic[];
  readonly assignments$: ReplaySubject<Assignment>;
  current?: Assignment;
}

interface GroupState {
  generation: number;
  readonly members: Member[];
}

/** Partitions per topic for every member, given the members in join order. */
export const standbyAssignment = (
  members: readonly { readonly memberId: string; readonly topics: readonly Topic[] }[],
  partitions: number,
): Map<string, Record<Topic, number[]>> => {
  const all = Array.from({ length: partitions }, (_, p) => p);
  const result = new Map<string, Record<Topic, number[]>>();
  for (const member of members) result.set(member.memberId, { desired: [], observed: [], heartbeats: [] });
  for (const topic of TOPICS) {
    const owner = members.find((member) => member.topics.includes(topic));
    if (owner) result.get(owner.memberId)![topic] = [...all];
  }
  return result;
};

/** The groups of one cluster (shared by every log instance on it in this process). */
export interface GroupCoordinator {
  join(groupId: string, topics: readonly Topic[]): GroupMembership;
}

export const createGroupCoordinator = (partitions: number): GroupCoordinator => {
  const groups = new Map<string, GroupState>();

  const rebalance = (group: GroupState): void => {
    group.generation += 1;
    const assignment = standbyAssignment(group.members, partitions);
    for (const member of group.members) {
      const partitionsByTopic = assignment.get(member.memberId)!;
      const changed =
        !member.current || TOPICS.some((topic) => member.current!.partitions[topic].join() !== partitionsByTopic[topic].join());
      if (!changed) continue;
      member.current = { generation: group.generation, partitions: partitionsByTopic };
      member.assignments$.next(member.current);
    }
  };

  const leave = (groupId: string, member: Member): void => {
    const group = groups.get(groupId);
    if (!group) return;
    const index = group.members.indexOf(member);
    if (index < 0) return;
    group.members.splice(index, 1);
    member.assignments$.complete();
    if (group.members.length === 0) groups.delete(groupId);
    else rebalance(group);
  };

  return {
    join(groupId, topics) {
      let group = groups.get(groupId);
      if (!group) {
        group = { generation: 0, members: [] };
        groups.set(groupId, group);
      }
      const member: Member = {
        memberId: `${groupId}-${randomUUID()}`,
        topics: [...new Set(topics)],
        assignments$: new ReplaySubject<Assignment>(1),
      };
      group.members.push(member);
      rebalance(group);
      return {
        memberId: member.memberId,
        assignments$: member.assignments$.asObservable(),
        leave: async () => leave(groupId, member),
      };
    },
  };
};
