import { DeliveryGuard, claimedOutcomeKey } from '../../core/callbacks/deliveryGuard';

describe('DeliveryGuard', () => {
	it('lets one of two copies arriving together through; the other waits for its verdict', async () => {
		const guard = new DeliveryGuard();
		let runs = 0;
		const decide = async () => {
			runs++;
			for (let i = 0; i < 5; i++) await Promise.resolve();
			return { taken: true, value: 'started' };
		};
		const outcomes = await Promise.all([guard.admit('job_1:done', 0, decide), guard.admit('job_1:done', 0, decide)]);
		expect(runs).toBe(1);
		expect(outcomes.filter((outcome) => outcome.duplicate)).toHaveLength(1);
	});

	it('a refused copy (forged) leaves no mark: the genuine one still starts', async () => {
		const guard = new DeliveryGuard();
		const forged = guard.admit('job_1:done', 0, async () => ({ taken: false, value: 'refused' }));
		const genuine = guard.admit('job_1:done', 0, async () => ({ taken: true, value: 'started' }));
		expect(await forged).toEqual({ duplicate: false, value: 'refused' });
		expect(await genuine).toEqual({ duplicate: false, value: 'started' });
	});

	it('keys a callback by the job and the status it claims, whatever its spelling', () => {
		expect(claimedOutcomeKey(JSON.stringify({ id: 'job_7', status: 'done' }))).toBe('job_7:done');
		expect(claimedOutcomeKey('not json')).toBeUndefined();
	});
});
