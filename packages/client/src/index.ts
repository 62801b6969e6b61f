export { ConsultError, isConsultError, type ErrorCode, type FieldError } from './errors.js';
export { createRestClient, body, type RestClient, type RestClientOptions, type paths } from './rest.js';
export {
  HubClient,
  type HubClientOptions,
  type HubArgs,
  type HubResult,
  type HubPush,
  type ClientToServerEvents,
  type ServerToClientEvents,
  type HubMethodName,
  type ServerEventName,
} from './hub.js';
export {
  signInWithPin,
  createQrLogin,
  pollQrLogin,
  approveQrLogin,
  getQrLoginCode,
  refuseQrLogin,
  issueOfflineToken,
  signInOffline,
  refreshSession,
  beginCodeSignIn,
  completeCodeSignIn,
  type LoginResponse,
  type QrLoginCode,
  type QrLoginCodeInfo,
  type RefusedQrLogin,
  type OfflineToken,
  type CodeSignInStart,
  type components,
} from './auth.js';
export { Session } from './session.js';
export { PushStreams, type PushPosition } from './push-streams.js';
