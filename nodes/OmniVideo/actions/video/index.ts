export * as generate from './generate.operation';
export { resumeOnCallback } from './resumeOnCallback';
