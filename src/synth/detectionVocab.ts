/**
 * Detection-side word lists: IDS rules, sigma rules, signature rules and MITRE techniques. Split
 * from `vocab.ts` only to keep files short; the same repetition argument applies.
 */
export const detectionVocab = {
  idsRules: [
    {
      msg: 'ET MALWARE Win32/Emotet CnC Activity (POST) M13',
      category: 'A Network Trojan was detected',
      source: 'Proofpoint Emerging Threats Open',
    },
    {
      msg: 'ET POLICY External IP Address Lookup Domain in DNS Lookup (api .ipify .org)',
      category: 'Device Retrieving External IP Address Detected',
      source: 'Proofpoint Emerging Threats Open',
    },
    { msg: 'ET INFO Observed DNS Query to .xyz TLD', category: 'Potentially Bad Traffic', source: 'Proofpoint Emerging Threats Open' },
    { msg: 'ET JA3 Hash - [Abuse.ch] Possible Dridex', category: 'Unknown Traffic', source: 'Proofpoint Emerging Threats Open' },
    {
      msg: 'ETPRO TROJAN Win32/AgentTesla Exfil via SMTP',
      category: 'A Network Trojan was detected',
      source: 'Proofpoint Emerging Threats Pro',
    },
    { msg: 'SURICATA TLS invalid record/traffic', category: 'Generic Protocol Command Decode', source: 'Suricata' },
    {
      msg: 'ET HUNTING Suspicious POST with Common Windows Process Names - Possible Process List Exfiltration',
      category: 'Misc activity',
      source: 'Proofpoint Emerging Threats Open',
    },
  ],
  severities: ['high', 'medium', 'low', 'info'],
  sigmaRules: [
    {
      title: 'Suspicious Encoded PowerShell Command Line',
      source: 'Sigma Integrated Rule Set (GitHub)',
      author: 'Florian Roth (Nextron Systems)',
    },
    { title: 'Creation of an Executable by an Executable', source: 'Sigma Integrated Rule Set (GitHub)', author: 'frack113' },
    {
      title: 'Scheduled Task Creation Via Schtasks.EXE',
      source: 'Sigma Integrated Rule Set (GitHub)',
      author: 'Florian Roth (Nextron Systems)',
    },
    {
      title: 'Shadow Copies Deletion Using Operating Systems Utilities',
      source: 'Sigma Integrated Rule Set (GitHub)',
      author: 'Florian Roth, Michael Haag, Teymur Kheirkhabarov',
    },
    {
      title: 'CurrentVersion Autorun Keys Modification',
      source: 'Sigma Integrated Rule Set (GitHub)',
      author: 'Victor Sergeev, Daniil Yugoslavskiy, Gleb Sukhodolskiy',
    },
    { title: 'Windows Defender Exclusions Added - Registry', source: 'Joe Security Rule Set (GitHub)', author: 'Joe Security' },
    { title: 'Process Creation Using Sysnative Folder', source: 'SOC Prime Threat Detection Marketplace', author: 'Max Altshuler' },
  ],
  sigmaLevels: ['critical', 'high', 'medium', 'low'],
  sigFormats: ['SIG_FORMAT_YARA', 'SIG_FORMAT_SIGMA', 'SIG_FORMAT_CAPA', 'SIG_FORMAT_OPENIOC', 'SIG_FORMAT_UNKNOWN'],
  sigNames: [
    'INDICATOR_SUSPICIOUS_EXE_UACBypass_CMSTPCOM',
    'MALWARE_Win_AgentTesla',
    'Windows_Trojan_CobaltStrike_b54b94ac',
    'contain obfuscated stackstrings',
    'encrypt data using RC4 PRGA',
    'persist via Run registry key',
    'Detect_Remcos_RAT',
    'SUSP_XORed_URL_In_EXE',
  ],
  sigSources: [
    'https://github.com/ditekshen/detection',
    'https://github.com/elastic/protections-artifacts',
    'https://github.com/mandiant/capa-rules',
    'https://github.com/Neo23x0/signature-base',
  ],
  sigAuthors: [
    'ditekSHen',
    'Elastic Security',
    'moritz.raabe@mandiant.com',
    'Florian Roth',
    'Arnim Rupp',
    'michael.hunhoff@mandiant.com',
    'jakub.jozwiak@mandiant.com',
  ],
  /** [id, signature_description] pairs; sub-techniques included on purpose. */
  mitre: [
    ['T1055', 'Injects into other processes'],
    ['T1059.001', 'Executes PowerShell commands'],
    ['T1059.003', 'Uses the Windows command shell'],
    ['T1547.001', 'Creates an autostart registry key'],
    ['T1053.005', 'Creates a scheduled task'],
    ['T1497', 'Checks for virtualization or sandboxes'],
    ['T1082', 'Queries system information'],
    ['T1012', 'Reads registry keys'],
    ['T1490', 'Deletes volume shadow copies'],
    ['T1486', 'Encrypts files'],
    ['T1071.001', 'Uses HTTP for command and control'],
    ['T1105', 'Downloads further payloads'],
    ['T1027', 'Contains obfuscated code'],
    ['T1562.001', 'Disables or modifies security tools'],
    ['T1057', 'Enumerates running processes'],
    ['T1016', 'Discovers network configuration'],
  ] as ReadonlyArray<readonly [string, string]>,
  mitreSeverities: ['IMPACT_SEVERITY_HIGH', 'IMPACT_SEVERITY_MEDIUM', 'IMPACT_SEVERITY_LOW', 'IMPACT_SEVERITY_INFO'],
} as const;
