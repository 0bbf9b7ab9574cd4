import { defineApp, version as platformVersion } from 'zapier-platform-core';
import authentication from './authentication';
import { addBearerForApi } from './host';
import { videoFileHydrator } from './files';
import generateVideo from './creates/generateVideo';
import uploadImage from './creates/uploadImage';
import findJob from './searches/findJob';
import jobCompleted from './triggers/jobCompleted';
import packageJson from '../package.json';

export default defineApp({
	version: packageJson.version,
	platformVersion,
	authentication,
	beforeRequest: [addBearerForApi],
	hydrators: { videoFile: videoFileHydrator },
	triggers: { [jobCompleted.key]: jobCompleted },
	creates: { [generateVideo.key]: generateVideo, [uploadImage.key]: uploadImage },
	searches: { [findJob.key]: findJob },
});
