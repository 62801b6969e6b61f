/**
 * What resolvers of the parent types return before the type's own field resolvers run (the `mappers`
 * of scripts/graphql-codegen.ts): the generated `Resolvers` type holds each field resolver to these.
 */
import type { Me } from '../../core/identity/account.service.js';
import type { AdminService } from '../../core/tenants/admin.service.js';
import type { GroupRecord } from '../../data/models/group.model.js';

/** `me`: the account service's view; Me's id, username, ... resolve from its `user`. */
export type MeModel = Me;
/** A group as stored; Group's id, ownerId, owner, participants resolve from it. */
export type GroupModel = GroupRecord;
/** The private-server configuration without its `json`, which is resolved from the rest. */
export type PrivateServerConfigModel = ReturnType<AdminService['privateServerConfig']>;

/** Compiles only when the model carries every field of the type that has no resolver (the default resolver reads it). */
export type Covered<Model, Type, Fields> = Model extends Omit<Type, keyof Fields | '__typename'> ? true : false;
export type Assert<T extends true> = T;
