export { startSandbox, type Sandbox, type SandboxOptions, type JournalEntry } from './server';
export { SCENARIOS, type ScenarioName } from './scenarios';
export { DEFAULT_CONFIG, type SandboxConfig } from './config';
