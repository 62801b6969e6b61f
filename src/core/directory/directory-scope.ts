import { Types } from 'mongoose';
import type { Principal } from '../../kernel/principal.js';
import type { EventRepository } from '../../data/repositories/event.repository.js';
import type { GroupRepository } from '../../data/repositories/group.repository.js';

/** The role whose view of the directory the tenant's `directory.patientScope` narrows. */
export const PATIENT_ROLE = 'patient';
/** How much of a patient's history makes their care team. */
const CARE_TEAM_EVENTS = 200;
const CARE_TEAM_GROUPS = 100;

export interface DirectoryScopeDeps {
  patientScope(tenant: string): Promise<'careTeam' | 'tenant'>;
  events: (tenant: string) => Pick<EventRepository, 'careTeamOf'>;
  groups: (tenant: string) => Pick<GroupRepository, 'careTeamOf'>;
}

/**
 * What a caller may see of the tenant's directory (contacts, presence), decision 230. Staff see
 * everyone. A patient sees their care team: the organizers, participants and headsets of their
 * non-cancelled events and the owners and members of their groups, unless the tenant's TenantConfig
 * `directory.patientScope` is `tenant`. REST, GraphQL and hub pushes all ask this one rule.
 */
export class DirectoryScope {
  constructor(private readonly deps: DirectoryScopeDeps) {}

  /** The user ids `p` may see besides themselves, or undefined for the whole tenant. */
  async visibleTo(p: Pick<Principal, 'tenant' | 'userId' | 'role'>): Promise<Types.ObjectId[] | undefined> {
    if (p.role !== PATIENT_ROLE) return undefined;
    if ((await this.deps.patientScope(p.tenant)) === 'tenant') return undefined;
    if (!Types.ObjectId.isValid(p.userId)) return [];
    const me = new Types.ObjectId(p.userId);
    const [events, groups] = await Promise.all([
      this.deps.events(p.tenant).careTeamOf(me, CARE_TEAM_EVENTS),
      this.deps.groups(p.tenant).careTeamOf(me, CARE_TEAM_GROUPS),
    ]);
    const seen = new Map<string, Types.ObjectId>();
    for (const id of [...events, ...groups]) if (!id.equals(me)) seen.set(String(id), id);
    return [...seen.values()];
  }
}
