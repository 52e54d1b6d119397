/**
 * A repository's git config on the user's machine often holds credentials the agent must not read:
 * a token in a remote's URL (`https://user:TOKEN@host/...`), the `Authorization` header CI
 * checkouts persist (`http.<url>.extraheader`, GitHub's actions/checkout), a proxy password, an
 * SMTP password. The copy keeps the config (git in the sandbox needs it) without those: user info
 * is cut from every URL, and the header and password keys are dropped. Line-based, for configs as
 * git and the usual tools write them.
 */

const CONFIG_FILE = [
  /(^|\/)\.git\/config(\.worktree)?$/,
  /(^|\/)\.git\/modules\/.+\/config(\.worktree)?$/,
  /(^|\/)\.git\/worktrees\/[^/]+\/config\.worktree$/,
];

/** Whether a copied path is a git config file of the repository or one nested in it. */
export function isGitConfigFile(rel: string): boolean {
  return CONFIG_FILE.some((re) => re.test(rel));
}

/** Keys whose values are credentials whatever they look like. */
const SECRET_KEY = /^\s*(extraheader|smtppass)\s*=/i;
/** `scheme://userinfo@` in any URL, quoted section names included. */
const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/@\s"'\]]*@/gi;

export function scrubGitCredentials(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const header = /^(\s*\[[^\]]*\])(.*)$/.exec(line);
      const [head, rest] = header ? [header[1]!, header[2]!] : ['', line];
      const kept = SECRET_KEY.test(rest) ? '' : rest;
      return `${head}${kept}`.replace(USERINFO, '$1');
    })
    .join('\n');
}
