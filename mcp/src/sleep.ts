import { abortableSleep } from '../../core';

/** The server's one abortable sleep (core takes it injected). */
export const sleep = abortableSleep({ start: (callback: () => void, ms: number) => setTimeout(callback, ms), cancel: clearTimeout });
