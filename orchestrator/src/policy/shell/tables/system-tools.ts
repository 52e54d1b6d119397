import { classTable, type Aliases, type ClassLists, type Example, type SubcommandTable } from './family';

/**
 * System tools: network clients, cloud and container CLIs, the system's package managers, and
 * the tools that need or change privileges. Their class does not depend on their arguments, except
 * apt's and systemctl's subcommands.
 */

export const SYSTEM_CLASSES: ClassLists = {
  destructive: 'wipefs mkfs fdisk sfdisk parted',
  network: `
  curl wget ssh scp sftp rsync nc ncat netcat socat telnet ftp lftp ping ping6 traceroute tracepath
  mtr dig nslookup host whois nmap http https xh aria2c axel mosh sshpass gh hub glab docker
  docker-compose podman kubectl helm terraform aws gcloud gsutil az heroku vercel netlify flyctl fly
  firebase ngrok yum dnf apk brew pacman zypper snap flatpak port conda mamba gem composer svn hg
  sendmail mail mutt`,
  privilege: `
  sudo su doas chown chgrp chroot mount umount setcap nsenter unshare chattr insmod rmmod modprobe
  sysctl iptables ip6tables nft ufw firewall-cmd useradd userdel usermod groupadd groupdel groupmod
  passwd chpasswd chsh newgrp visudo service reboot shutdown halt poweroff setenforce capsh pkexec
  runuser setpriv launchctl at hostnamectl timedatectl losetup swapon swapoff ldconfig dpkg rpm
  mknod setfacl`,
};

/** apt and systemctl by subcommand. */
export const SYSTEM_SUBCOMMANDS: Record<string, SubcommandTable> = {
  apt: {
    otherwise: 'network',
    classes: classTable({
      'read-only': 'list search show policy depends rdepends',
      destructive: 'remove purge autoremove',
    }),
  },
  systemctl: {
    otherwise: 'privilege',
    classes: classTable({
      'read-only': 'status show cat list-units list-unit-files is-active is-enabled is-failed',
    }),
  },
};

export const SYSTEM_ALIASES: Aliases = { 'apt-get': 'apt', aptitude: 'apt' };

export const SYSTEM_EXAMPLES: Example[] = [
  ['curl https://example.com', 'network'],
  ['docker ps', 'network'],
  ['sudo ls', 'privilege'],
  ['chown me f', 'privilege'],
  ['mkfs.ext4 /dev/sda1', 'destructive'],
  ['apt-get install x', 'network'],
  ['apt list --installed', 'read-only'],
  ['apt remove x', 'destructive'],
  ['systemctl status x', 'read-only'],
  ['systemctl restart x', 'privilege'],
  ['crontab -l', 'read-only'],
  ['crontab f', 'privilege'],
  ['hostname', 'read-only'],
  ['hostname -b x', 'privilege'],
];
