export { makeDirs } from './makeDirs.js';
