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
    {
      name: 'egress-proxy-self-contained',
      severity: 'error',
      comment:
        'The egress proxy runs with Node alone (images/egress): it and the shared egress folder import only ' +
        "each other and Node's own modules.",
      from: { path: '^(egress-proxy/src|shared/src/egress)/' },
      to: { pathNot: '^(egress-proxy/src|shared/src/egress)/', dependencyTypesNot: ['core'] },
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
