// The entry Zapier loads (its wrapper requires ./index.js): the app, bundled by `npm run build`.
module.exports = require('./dist/index.js');
