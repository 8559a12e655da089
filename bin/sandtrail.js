#!/usr/bin/env node
// Runs the compiled CLI; `npm install` builds it (the package's prepare script).
import('../dist/src/cli/run.js');
