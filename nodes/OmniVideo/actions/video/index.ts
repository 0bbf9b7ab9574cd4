export * as generate from './generate.operation';
export { resumeOnCallback } from './resumeOnCallback';
export { RESUME_PATH } from './resumeUrl';
