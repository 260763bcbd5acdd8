// The classic worker: the module worker's code, which the bundler builds into one classic
// script (no import statements at run time).
import "./worker.js";
