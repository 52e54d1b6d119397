export * from './canonical';
export * from './ids';
export * from './subjects';
export * from './protocol/limits';
export * from './protocol/primitives';
export * from './protocol/messages';
export * from './protocol/codec';
