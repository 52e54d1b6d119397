/**
 * The import rules `npm test` checks (scripts/test.sh runs `depcruise`). Data flows one way
 * through the folders; a cycle means two modules can no longer be understood or changed apart.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles: split out what both sides need, or invert the dependency.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-test-code-in-src',
      severity: 'error',
      comment:
        'Production code never imports tests or test support (src/testing/ is production code for tests to use).',
      from: { path: '/src/' },
      to: { path: '(^|/)test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(node_modules|/dist/|/build/)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
