// The application's shape (decision 1128): what the composition hands every transport, role, actor and job.
export type { Infra } from './infra.js';
export type { Services, WebhookServices, NodeActors } from './services.js';
export type { AuthServices } from './auth-services.js';
export type { ActorClient, RoleHandle, RoleContext, RoleStarter } from './roles.js';
