export { main, buildProgram } from './main.js';
