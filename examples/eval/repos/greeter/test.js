// A test with output that is the same on every run (no timings), so a scripted eval is deterministic.
import assert from 'node:assert/strict';
import { greet } from './src/greet.js';

assert.equal(greet('Ada'), 'Hello, Ada!', 'greet() capitalises and ends with "!"');
console.log('ok: greet');
