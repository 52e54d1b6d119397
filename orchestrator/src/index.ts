export * from './sandbox/index';
