/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { createPiece } from '@activepieces/pieces-framework';
import { PieceCategory } from '@activepieces/shared';
import { omniVideoAuth } from './auth';
import { generateVideo } from './actions/generate-video';
import { getJob } from './actions/get-job';
import { uploadImage } from './actions/upload-image';
import { jobCompleted } from './triggers/job-completed';

export { omniVideoAuth };

export const omniVideo = createPiece({
	displayName: 'Omni Video',
	description: 'Generate videos from a prompt, an image or footage, and start flows when they are ready.',
	auth: omniVideoAuth,
	logoUrl: 'https://raw.githubusercontent.com/omni-video/n8n-nodes-omni-video/main/icons/omniVideo.svg',
	authors: ['omni-video'],
	categories: [PieceCategory.ARTIFICIAL_INTELLIGENCE, PieceCategory.CONTENT_AND_FILES],
	actions: [generateVideo, getJob, uploadImage],
	triggers: [jobCompleted],
});
