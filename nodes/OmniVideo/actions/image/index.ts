export * as upload from './upload.operation';
