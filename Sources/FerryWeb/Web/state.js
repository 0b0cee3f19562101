// The page's state, shared by the modules.

export const state = {
  source: null,        // /api/source answer
  folder: null,        // current folder path
  entries: [],         // entries of the current folder, as the API sent them
  sort: (localStorage.getItem('ferry.sort') || 'name').split(' ')[0],
  descending: (localStorage.getItem('ferry.sort') || '').endsWith(' down'),
  thumbSide: undefined, // the thumbnail size the grid asks for (undefined: the server's default)
  showHidden: localStorage.getItem('ferry.showHidden') === '1',
  selected: new Set(), // paths of selected entries (current folder)
  anchor: null,        // last clicked path, for shift-click ranges
  listToken: 0,        // guards against a slow listing arriving after a newer one
};
