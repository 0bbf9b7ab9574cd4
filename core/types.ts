/** The one model the API accepts. */
export const MODEL = 'omni-video';

export const RESOLUTIONS = ['720P', '1080P', '4K'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export const DEFAULT_RESOLUTION: Resolution = '1080P';
export const DEFAULT_DURATION_SECONDS = 8;
export const MIN_DURATION_SECONDS = 4;
export const MAX_DURATION_SECONDS = 10;
export const MAX_PROMPT_CODE_POINTS = 2000;

/** Which input the job animates: chosen by imageUrl / videoUrl. */
export type GenerationMode = 'text-to-video' | 'image-to-video' | 'video-to-video';

/** What a platform adapter collects from the user before validation. */
export interface GenerateVideoInput {
	prompt: string;
	/** Any casing; `1080p` is normalised to `1080P`. */
	resolution?: string;
	/** Seconds; the user's value is passed on as given (the server decides on fractions). */
	duration?: number | string;
	imageUrl?: string;
	videoUrl?: string;
	callbackUrl?: string;
	model?: string;
}

/** The JSON body sent to POST /api/v1/generate, after validation. */
export interface GenerateVideoRequest {
	model: typeof MODEL;
	prompt: string;
	resolution: Resolution;
	duration: number;
	imageUrl?: string;
	videoUrl?: string;
	callbackUrl?: string;
}

/** Normalised job state: every unknown status reads as `running`. */
export type JobStatus = 'queued' | 'running' | 'done' | 'failed';

/** A job as core hands it to the adapters, whatever spelling the service used. */
export interface JobRecord {
	id: string;
	status: JobStatus;
	/** The status string exactly as the service sent it. */
	rawStatus: string;
	progress?: number;
	resultUrls: string[];
	creditsQueued?: number;
	creditsUsed?: number;
	createdAt?: string;
	completedAt?: string;
	error?: string;
	errorCode?: string;
	model?: string;
}

/** What POST /api/upload hands back, normalised. */
export interface UploadTicket {
	uploadUrl: string;
	fileUrl: string;
	method: string;
	headers: Record<string, string>;
	expiresAt?: string;
}

export interface UploadFileInput {
	filename: string;
	contentType: string;
	data: Uint8Array;
}

/**
 * A file sent on as it arrives, never held whole: its size as the source announced it, its first
 * bytes to tell its type, and the body the host's transport can send (see StreamBody).
 */
export interface StreamedUploadInput {
	filename: string;
	contentType: string;
	size: number;
	head: Uint8Array;
	body: unknown;
	/** Stops the source when the upload is refused before its bytes are read. */
	cancel?: () => void;
	/** The body again from its start, when storage redirects the upload (see StreamBody). */
	reopen?: () => Promise<unknown>;
}

/** Requests per window and concurrent jobs allowed by a plan. */
export interface PlanLimits {
	requestsPerMinute: number;
	requestsPerHour: number;
	concurrentJobs: number;
}

export const PLANS = {
	pro: { requestsPerMinute: 30, requestsPerHour: 200, concurrentJobs: 5 },
	premium: { requestsPerMinute: 60, requestsPerHour: 500, concurrentJobs: 10 },
} as const satisfies Record<string, PlanLimits>;

export type PlanName = keyof typeof PLANS;
