export type { ApprovalAnswer, ApprovalChannel, ApprovalChannelName, ApprovalPrompt, ApprovalScope } from './types';
export { terminalChannel, type TerminalChannelOptions } from './terminal';
export { headlessChannel, type OnAsk } from './headless';
export { previewOf } from './preview';
export { natsChannel, type NatsChannelOptions } from './nats';
export {
  answerOverNats,
  AnswerReply,
  Approver,
  ApproverName,
  newApproverKey,
  signAnswer,
  SignedAnswer,
  signingBytes,
  UserPublicKey,
  verifyAnswerSignature,
  type ApproverKey,
  type UnsignedAnswer,
} from './approverKeys';
