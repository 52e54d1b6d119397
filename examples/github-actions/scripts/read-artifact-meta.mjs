// Between download and checkout in the answer job: the commit the paused run worked on, from its meta.json.
import { existsSync, readFileSync } from 'node:fs';
import { artifactPaths, fail, setOutput } from './lib.mjs';

const { meta: metaFile } = artifactPaths();
if (!existsSync(metaFile)) fail(`no paused run was downloaded (${metaFile} is missing): check the origin run id`);
const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
if (!/^[0-9a-f]{40}$/.test(meta.sha ?? '')) fail('the paused run does not say which commit it worked on');
if (meta.exitCode !== 3) fail(`run ${meta.runId} is not paused (it ended ${meta.status}); there is nothing to answer`);
setOutput('sha', meta.sha);
setOutput('model', meta.model ?? '');
