import { Types } from 'mongoose';
import type { Principal } from '../../kernel/principal.js';
import type { EventRepository } from '../../data/repositories/event.repository.js';
import type { GroupRepository } from '../../data/repositories/group.repository.js';
import type { CareTeamStore } from '../../data/stores/care-team.store.js';
import type { Logger } from '../../observability/logger.js';

/** The role whose view of the directory the tenant's `directory.patientScope` narrows. */
export const PATIENT_ROLE = 'patient';
/** How much of a patient's history makes their care team. */
const CARE_TEAM_EVENTS = 200;
const CARE_TEAM_GROUPS = 100;

export interface DirectoryScopeDeps {
  patientScope(tenant: string): Promise<'careTeam' | 'tenant'>;
  events: (tenant: string) => Pick<EventRepository, 'careTeamOf'>;
  groups: (tenant: string) => Pick<GroupRepository, 'careTeamOf'>;
  /** The care teams kept between asks (decision 1132); without it every ask queries. */
  careTeams?: Pick<CareTeamStore, 'recall' | 'remember'>;
  logger?: Pick<Logger, 'warn'>;
}

/**
 * What a caller may see of the tenant's directory (contacts, presence), decision 230. Staff see
 * everyone. A patient sees their care team: the organizers, participants and headsets of their
 * non-cancelled events and the owners and members of their groups, unless the tenant's TenantConfig
 * `directory.patientScope` is `tenant`. REST, GraphQL and hub pushes all ask this one rule.
 *
 * A patient's care team is asked at every hub connection and directory request, and its queries read
 * every event of the tenant on a server without secondary indexes: it is kept in the care-team cache,
 * which every write that can change it retires (decision 1132). Without Redis it is queried each time.
 */
export class DirectoryScope {
  constructor(private readonly deps: DirectoryScopeDeps) {}

  /** The user ids `p` may see besides themselves, or undefined for the whole tenant. */
  async visibleTo(p: Pick<Principal, 'tenant' | 'userId' | 'role'>): Promise<Types.ObjectId[] | undefined> {
    if (p.role !== PATIENT_ROLE) return undefined;
    if ((await this.deps.patientScope(p.tenant)) === 'tenant') return undefined;
    if (!Types.ObjectId.isValid(p.userId)) return [];
    const me = new Types.ObjectId(p.userId);
    const cache = this.deps.careTeams;
    if (!cache) return this.careTeamOf(p.tenant, me);
    const recalled = await cache.recall(p.tenant, String(me)).catch((e: unknown) => this.cacheFailed(e));
    if (recalled?.ids) return recalled.ids.map((id) => new Types.ObjectId(id));
    const team = await this.careTeamOf(p.tenant, me);
    if (recalled?.ticket)
      await cache.remember(recalled.ticket, team.map(String)).catch((e: unknown) => this.cacheFailed(e));
    return team;
  }

  /** The care team as the database has it now. */
  private async careTeamOf(tenant: string, me: Types.ObjectId): Promise<Types.ObjectId[]> {
    const [events, groups] = await Promise.all([
      this.deps.events(tenant).careTeamOf(me, CARE_TEAM_EVENTS),
      this.deps.groups(tenant).careTeamOf(me, CARE_TEAM_GROUPS),
    ]);
    const seen = new Map<string, Types.ObjectId>();
    for (const id of [...events, ...groups]) if (!id.equals(me)) seen.set(String(id), id);
    return [...seen.values()];
  }

  private cacheFailed(e: unknown): undefined {
    this.deps.logger?.warn({ component: 'directory-scope', err: (e as Error).message }, 'care-team cache unavailable');
    return undefined;
  }
}
