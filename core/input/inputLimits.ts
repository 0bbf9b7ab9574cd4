import {
	DEFAULT_DURATION_SECONDS,
	DEFAULT_RESOLUTION,
	MAX_DURATION_SECONDS,
	MAX_PROMPT_CODE_POINTS,
	MIN_DURATION_SECONDS,
	MODEL,
	RESOLUTIONS,
} from '../types';

/** The only hosts an insecure (http://) callback may name, and only when the caller allows it. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Longer addresses are the file's content pasted in (a data: URL, base64), not a link; servers and
 * proxies commonly refuse URLs past 8 KB, and the API's JSON body has a size limit of its own.
 */
export const MAX_URL_CHARS = 8192;

/** The rules of a Generate Video request (docs/api.md#validation), in one place for every reader. */
export const GENERATE_LIMITS = {
	model: MODEL,
	resolutions: RESOLUTIONS,
	defaultResolution: DEFAULT_RESOLUTION,
	minDurationSeconds: MIN_DURATION_SECONDS,
	maxDurationSeconds: MAX_DURATION_SECONDS,
	defaultDurationSeconds: DEFAULT_DURATION_SECONDS,
	/** Counted as people count characters: an emoji or an accented letter is one. */
	maxPromptCharacters: MAX_PROMPT_CODE_POINTS,
	maxUrlChars: MAX_URL_CHARS,
	loopbackHosts: LOOPBACK_HOSTS,
} as const;

export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
export const VIDEO_TYPES = ['video/mp4', 'video/quicktime'] as const;

/** The media types an upload may have, by the kind of file asked for. */
export const UPLOAD_TYPES = { image: IMAGE_TYPES, video: VIDEO_TYPES } as const;
