from configparser import ConfigParser
from packaging.version import Version
import setuptools, shlex

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']
for o in 'version description keywords author author_email'.split(): assert o in cfg, f'missing {o} in settings.ini'
Version(cfg['version'])  # refuse a malformed version early (packaging replaces pkg_resources)

licenses = {'apache2': ('Apache Software License 2.0', 'OSI Approved :: Apache Software License')}
statuses = ['1 - Planning', '2 - Pre-Alpha', '3 - Alpha', '4 - Beta', '5 - Production/Stable', '6 - Mature', '7 - Inactive']
py_versions = '3.10 3.11 3.12 3.13'.split()
lic = licenses[cfg['license']]
min_python = cfg['min_python']

def reqs(key): return shlex.split(cfg.get(key, ''))

extras = {k: reqs(f'{k}_requirements') for k in ('dev', 'eval', 'wandb', 'gpu', 'cluster')}
extras['all'] = extras['eval'] + extras['wandb'] + extras['cluster']  # gpu kernels are installed last, by hand (see README)

setuptools.setup(
    name=cfg['lib_name'],
    license=lic[0],
    classifiers=['Development Status :: ' + statuses[int(cfg['status'])],
                 'Intended Audience :: ' + cfg['audience'].title(),
                 'Natural Language :: ' + cfg['language'].title(),
                 'License :: ' + lic[1]] +
                ['Programming Language :: Python :: ' + o for o in py_versions[py_versions.index(min_python):]],
    url=cfg['git_url'],
    packages=setuptools.find_namespace_packages(include=['lengen', 'lengen.*']),
    include_package_data=True,
    package_data={'lengen': ['conf/*.yaml', 'conf/*/*.yaml', 'helmet_configs/*.yaml']},
    install_requires=reqs('requirements'),
    extras_require=extras,
    python_requires='>=' + min_python,
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    zip_safe=False,
    entry_points={'console_scripts': cfg.get('console_scripts', '').split(),
                  'nbdev': [f'{cfg["lib_path"]}={cfg["lib_path"]}._modidx:d']},
    **{k: cfg[k] for k in 'version description keywords author author_email'.split()})
