import type { Types } from 'mongoose';
import type { Principal } from '../../kernel/principal.js';
import type { GroupRecord, GroupRepository } from '../../data/repositories/group.repository.js';
import type { UserRepository } from '../../data/repositories/user.repository.js';
import { AppError, type FieldError } from '../../kernel/errors.js';
import { oid, oids } from '../../kernel/object-id.js';
import type { CreateGroupCommand, GroupMembersCommand, RenameGroupCommand } from './contact.schema.js';

export interface GroupDeps {
  groups: (tenant: string) => GroupRepository;
  users: (tenant: string) => Pick<UserRepository, 'existingActiveIds'>;
}

/**
 * Contact groups. The owner manages a group; its participants may read it. A non-owner's change
 * is answered group_not_found, exactly like a missing id, so group ids cannot be probed.
 */
export class GroupService {
  constructor(private readonly deps: GroupDeps) {}

  async byId(p: Principal, groupId: string): Promise<GroupRecord> {
    const g = await this.deps
      .groups(p.tenant)
      .findVisible(oid(groupId, 'group_not_found'), oid(p.userId, 'group_not_found'));
    if (!g) throw new AppError('group_not_found', `No group ${groupId}`);
    return g;
  }

  /** Visible groups among `ids`, in one query (GraphQL loaders). */
  byIds(p: Principal, ids: readonly Types.ObjectId[]): Promise<GroupRecord[]> {
    return this.deps.groups(p.tenant).findVisibleMany(ids, oid(p.userId, 'group_not_found'));
  }

  async create(p: Principal, cmd: CreateGroupCommand): Promise<GroupRecord> {
    const members = await this.members(p.tenant, cmd.participantIds);
    return this.deps.groups(p.tenant).create(oid(p.userId, 'user_not_found'), cmd.name, members);
  }

  async rename(p: Principal, cmd: RenameGroupCommand): Promise<GroupRecord> {
    return this.owned(p, cmd.groupId, (repo, id, owner) => repo.rename(id, owner, cmd.name));
  }

  async add(p: Principal, cmd: GroupMembersCommand): Promise<GroupRecord> {
    const members = await this.members(p.tenant, cmd.participantIds);
    return this.owned(p, cmd.groupId, (repo, id, owner) => repo.addParticipants(id, owner, members));
  }

  async remove(p: Principal, cmd: GroupMembersCommand): Promise<GroupRecord> {
    return this.owned(p, cmd.groupId, (repo, id, owner) =>
      repo.removeParticipants(id, owner, oids(cmd.participantIds)),
    );
  }

  private async owned(
    p: Principal,
    groupId: string,
    op: (repo: GroupRepository, id: Types.ObjectId, owner: Types.ObjectId) => Promise<GroupRecord | null>,
  ): Promise<GroupRecord> {
    const g = await op(this.deps.groups(p.tenant), oid(groupId, 'group_not_found'), oid(p.userId, 'group_not_found'));
    if (!g) throw new AppError('group_not_found', `No group ${groupId} owned by you`);
    return g;
  }

  /** Every participant must be an active user of the tenant; unknown ids are named per field. */
  private async members(tenant: string, ids: string[]): Promise<Types.ObjectId[]> {
    const known = await this.deps.users(tenant).existingActiveIds(oids(ids));
    const errors: FieldError[] = [];
    ids.forEach((id, i) => {
      if (!known.has(id.toLowerCase()))
        errors.push({ field: `participantIds.${i}`, message: 'no active user with this id' });
    });
    if (errors.length)
      throw new AppError('validation_failed', `${errors[0]!.field}: ${errors[0]!.message}`, { errors });
    return oids([...new Set(ids.map((s) => s.toLowerCase()))]);
  }
}
