/**
 * The plan's record that several processes using one key keep together, so that their limiters
 * act as one limiter: the MCP server's state folder under a lock on one machine, Redis for
 * replicas. Each call is one atomic step across every process sharing the record. core sees only
 * this interface, never a file or a socket; a host without such a record passes none.
 */
export interface SharedPlan {
	/**
	 * Counts one request sent at `atMs` when both windows ending then have room for it (fewer than
	 * `perMinute` requests in the last minute and `perHour` in the last hour, each widened by
	 * `marginMs`), and answers the times of the requests in the last hour, every process's, this
	 * one included when granted.
	 */
	claimRequest(atMs: number, room: RequestRoom): Promise<{ granted: boolean; sentAtMs: number[] }>;
	/**
	 * Holds a place among the plan's jobs at once for a create about to be sent, when fewer than
	 * `limit` are held by every process; answers when the places held by others are expected to
	 * free, for a caller that must wait. An unbound place lapses by itself (`lapseAtMs`), so that a
	 * process killed while its create was in flight cannot hold it for ever.
	 */
	claimPlace(placeId: string, atMs: number, limit: number, lapseAtMs: number): Promise<{ granted: boolean; othersFreeAtMs: number[] }>;
	/** The create was accepted: its place belongs to the job until it is seen ended or `holdUntilMs` passes. */
	bindPlace(placeId: string, jobId: string, expectedDoneAtMs: number, holdUntilMs: number): Promise<void>;
	/** The create failed, or made a job that holds no place (already ended): the place is free. */
	releasePlace(placeId: string): Promise<void>;
	/** A job was seen ended, by whichever process: its place is free for all of them. */
	jobEnded(jobId: string): Promise<void>;
}

export interface RequestRoom {
	perMinute: number;
	perHour: number;
	marginMs: number;
}

/** Fire and forget for the steps whose answer nobody waits for: a failing record costs a place for a while, never a call. */
export function unawaited(step: Promise<void>): void {
	step.catch(() => undefined);
}
